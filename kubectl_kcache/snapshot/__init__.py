"""What we know of the cluster, and how we came to know it.

`kinds` (the registry of kinds and `ListSpec`), `plan` (THE READ PLAN: every list the commands make),
`reads` (what was read and THE read rule: `covering`, `require`), `model` (ClusterSnapshot), and the ways to
a snapshot: `live` (listing the API server), `files` (`--from-file` input), `informer` (one list-and-watch
loop) and `follow` (`status -w` over informers); `dump` writes a snapshot file.
"""
