"""Celery settings for `celery -A dagster_celery.app worker` (dagster-celery imports this module by name).

Put this folder on the worker's PYTHONPATH. The broker and result backend must be the ones the
`<suite>__celery_trials_job` run config names (evalsuite_dagster.trials.celery.celery_run_config reads the same
variables), or the workers never see the steps.
"""
import os

broker_url = os.environ.get("EVALSUITE_CELERY_BROKER", "redis://127.0.0.1:6379/0")
result_backend = os.environ.get("EVALSUITE_CELERY_BACKEND", broker_url)

# Dagster's console logger writes each step's events to stderr; Celery's default redirects a task's stderr into its
# own log at WARNING, so every event (DEBUG included) read as a warning. Left alone, the lines keep Dagster's level.
worker_redirect_stdouts = False
