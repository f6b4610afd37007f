"""Importers: public benchmarks and other ready-made sources turned into evalsuite suites."""
