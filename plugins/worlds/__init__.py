"""World backends other than the embedded one (the paper's game server: ``paper_server``)."""
