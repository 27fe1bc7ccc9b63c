"""The built-in game plugins, registered through the "pbm" entry-point group like any other."""
