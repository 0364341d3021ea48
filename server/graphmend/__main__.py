from graphmend.cli import main

raise SystemExit(main())
