"""The Python reference feed consumer's parts; client.py beside this package is the entry and
the module its named steps are looked up in (consumer/feed/CONTRACT.md, all sections)."""
