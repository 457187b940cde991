"""The ideas stage: each paper becomes a results-masked record and five views.

`record` defines the record, `views` derives the views (one function for every consumer),
`leaks` finds measured results, `backends` produce records (extractive, openai, vllm),
`validate` accepts, repairs or rejects answers, `build` runs the stage incrementally."""
