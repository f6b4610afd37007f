"""The Celery trial job: one agent's trials on one release in chunks over Celery workers."""
