"""Fixture models for the live probe tests (markers `# BREAK:...` name the lines Dynamo breaks on)."""
