"""The state of a vault in a few distributions (`summary`), as an HTML page (`html`) with SVG
charts (`charts`)."""
