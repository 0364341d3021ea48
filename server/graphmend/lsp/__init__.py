"""The language server: diagnostics at break sites, quick fixes, fix-all, fix on save, hover
and code lenses over the analysis engine (pygls 2). Entry point: `graphmend serve`."""
