import sys

try:
    from .cli import main
except KeyboardInterrupt:                   # Ctrl-C while the command line's modules load
    print("stormsim: interrupted (Ctrl-C) while loading", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
