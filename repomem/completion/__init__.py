"""From retrieved context to a completion: the prompt is assembled (``prompt``), a backend writes
(``backends``), the text is cut to what the editor should insert (``postprocess``);
``engine`` runs the RepoCoder-style iterations."""
