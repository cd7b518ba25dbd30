from crux_devtools import prompt

main = prompt("main", system="From the configured package module.")
