from crux_devtools import prompt

extra = prompt("extra", system="From a configured file path whose name starts with a digit.")
