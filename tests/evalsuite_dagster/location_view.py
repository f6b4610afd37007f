"""What a user sees of the code location's definitions: asset keys and their groups, deps, partitions and kinds;
checks; jobs and what they select; sensors and schedules and their targets."""
from __future__ import annotations

import dagster as dg


def _partitions(p) -> str | None:
    if p is None:
        return None
    if isinstance(p, dg.MultiPartitionsDefinition):
        return "multi(" + ",".join(f"{d.name}={d.partitions_def.name}" for d in p.partitions_defs) + ")"
    return getattr(p, "name", None) or type(p).__name__


def user_view(defs: dg.Definitions) -> dict:
    graph = defs.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name, "kinds": sorted(node.kinds), "partitions": _partitions(node.partitions_def),
            "deps": sorted(k.to_user_string() for k in node.parent_keys),
            "observable": node.is_observable, "automation": node.automation_condition is not None}
    checks = sorted(f"{c.asset_key.to_user_string()}:{c.name}" for c in graph.asset_check_keys)
    jobs = {}
    for job in defs.resolve_all_job_defs():
        if job.name == "__ASSET_JOB":
            continue
        keys = job.asset_layer.selected_asset_keys if job.asset_layer else set()
        ops = sorted(n.name for n in job.nodes_in_topological_order)  # a job of ops (the Celery one)
        jobs[job.name] = sorted(k.to_user_string() for k in keys) or ops
    sensors = {s.name: sorted(getattr(t, "job_name", "") or "" for t in s.targets) for s in defs.sensors or []}
    schedules = {s.name: s.job_name for s in defs.schedules or []}
    return {"assets": assets, "checks": checks, "jobs": dict(sorted(jobs.items())),
            "sensors": dict(sorted(sensors.items())), "schedules": dict(sorted(schedules.items()))}
