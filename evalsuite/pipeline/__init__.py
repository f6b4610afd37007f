"""The suite build: stages, the gate registry, the build driver, code versions and the drop folder; no Dagster."""
