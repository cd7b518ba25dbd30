from crux_devtools import prompt

ok = prompt("ok", system="fine")
raise RuntimeError("configuration file settings.ini not found")
