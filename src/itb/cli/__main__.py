"""`python -m itb.cli`."""

from itb.cli import main

main()
