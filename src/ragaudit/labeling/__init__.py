"""Making a golden set: pooling candidates, the labeling workbench, judgments, merge and agreement."""
