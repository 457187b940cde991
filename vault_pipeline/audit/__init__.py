"""The integrity audit of the LLM-made tables (masked records, views, quarantine, evaluation
ideas): the report of each run that every card and export quotes, and its stage."""
