"""The grammars of fuseflowc's three languages, one .lark file each (installed as fuseflowc.grammars)."""
