"""What a prompt gets beyond the cursor's file: definition cards for the names the cursor's code
uses, found through the code graph (:mod:`repomem.context.definitions`)."""
