from crux_devtools import prompt

ignored = prompt("ignored", system="Not listed in modules, so not discovered.")
