import sys

from crux_devtools import prompt

ok = prompt("ok", system="fine")
sys.exit(3)
