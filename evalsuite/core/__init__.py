"""The bottom layer: task records, canonical hashing, run identity, file and YAML helpers, the home folder."""
