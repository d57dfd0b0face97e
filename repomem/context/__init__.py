"""What a prompt gets beyond the cursor's file: fragments ranked by FragRel's relation-aware
score (``scorer``) and definition cards for the names the cursor's code uses, found through the
code graph (``definitions``, ``cards``)."""
