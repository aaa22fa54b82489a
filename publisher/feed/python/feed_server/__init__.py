"""The Python reference feed server's parts; server.py beside this package is the command and
the module its named steps are looked up in (the server contract, all sections)."""
