"""What every stage shares: the `Stage` declaration, the one settings resolver, check outcomes,
progress callbacks, lazy imports and the allocator set up before Polars loads."""
