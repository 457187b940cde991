"""The vault read from outside: the Python API (`api`), the HTTP service (`serve`) and its
standard-library client (`client`)."""
