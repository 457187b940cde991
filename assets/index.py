"""index: the LanceDB retrieval index of vault views (vectors and full text), and the checks
that it cannot see the future."""


import dagster as dg

from assets.metadata import check_result
from assets.resources import VaultResource
from assets.stages import stage_asset
from vault_pipeline.embeddings.embedders import load_query_embedder
from vault_pipeline.index import quality
from vault_pipeline.index.lance_index import index_metadata, open_index
from vault_pipeline.index.stage import STAGE

index = stage_asset(STAGE, kinds=frozenset({"lancedb"}))


@dg.asset_check(asset="index", blocking=True,
                description="No row of the index is a paper published on or after the "
                            "cutoff (dates from `papers`, membership from `splits`).")
def index_no_post_cutoff_rows(vault: VaultResource) -> dg.AssetCheckResult:
    return check_result(quality.no_post_cutoff_rows(vault.paths()))


@dg.asset_check(asset="index", blocking=True,
                description="No target's own id or view text is in the index, and searching "
                            "with a target's inputs never returns it.")
def index_no_target_reachable(vault: VaultResource) -> dg.AssetCheckResult:
    paths = vault.paths()
    table = open_index(paths)
    # the searches' own embedder (ONNX Runtime): the check asks as a user's search does
    embedder = load_query_embedder(index_metadata(table)["embedder_source"])
    return check_result(quality.no_target_reachable(paths, embedder, table=table))


index_assets = [index]
index_checks = [index_no_post_cutoff_rows, index_no_target_reachable]
