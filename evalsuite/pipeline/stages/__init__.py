"""The build stages, one module each: the work, the record it leaves on disk, and the gates that decide on it."""
