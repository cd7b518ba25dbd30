from crux_devtools import prompt
import package_that_is_not_installed  # noqa: F401

ok = prompt("ok", system="fine")
