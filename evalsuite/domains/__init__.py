"""The particular domains, one package per business process; looked up by name through evalsuite.worlds.registry."""
