"""Model backends behind one small async, batched interface (see ``base.Backend``)."""
