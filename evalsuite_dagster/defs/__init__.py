"""The defs folder Dagster loads (dg.load_from_defs_folder): the component instances and shared definitions."""
