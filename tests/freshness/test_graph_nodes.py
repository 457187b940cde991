"""The asset graph the fingerprint check keeps is one graph whichever face ran: a step
launched from the UI records `Node.of(stage)` for its outputs, and that is what Dagster's own
graph holds (upstream assets, group) for every declared stage."""

from __future__ import annotations

import dagster as dg

from vault_pipeline.definitions import build_defs
from vault_pipeline.freshness.fingerprints import Node
from vault_pipeline.pipeline.stage import DECLARED


def test_every_declared_output_is_in_dagster_as_its_stage_declares() -> None:
    graph = build_defs().resolve_asset_graph()
    for stage in DECLARED.values():
        for output in stage.outputs:
            node = graph.get(dg.AssetKey(output.name))
            parents = tuple(sorted(p.to_user_string() for p in node.parent_keys))
            assert Node.of(stage) == Node(stage.name, parents, node.group_name,
                                          stage.sections), output.name
