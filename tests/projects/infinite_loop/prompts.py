from crux_devtools import prompt

ok = prompt("ok", system="fine")
while True:
    pass
