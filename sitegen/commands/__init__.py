"""The commands: what each one does once ``cli.py`` has read its options, and what it prints.

One module a command (``build``, ``watch``, ``serve``, ``check``, ``host_config``), what their
options become (``params``, ``options``) and what a build prints (``output``). Each imports
the core on first use, so ``sitegen --help`` stays quick.
"""
