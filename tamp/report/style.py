"""The report's stylesheet (inline: a report page never loads anything from elsewhere).

Every rule is scoped under ``.tamp-report`` so a fragment shown in a notebook leaves the
notebook's own styles alone.
"""

CSS = """
.tamp-report { font-family: -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif; font-size: 14px;
  color: #1d2630; line-height: 1.4; max-width: 1500px; }
.tamp-report h1 { font-size: 22px; margin: 8px 0 4px; }
.tamp-report h2 { font-size: 18px; margin: 22px 0 6px; border-bottom: 1px solid #d5dbe1; padding-bottom: 3px; }
.tamp-report h3 { font-size: 15px; margin: 14px 0 6px; }
.tamp-report .meta { color: #5d6d7e; font-size: 12px; }
.tamp-report .verdict { display: inline-block; padding: 1px 9px; border-radius: 10px; font-weight: bold;
  font-size: 12px; letter-spacing: .04em; color: #fff; vertical-align: middle; }
.tamp-report .verdict.proved { background: #1e8449; }
.tamp-report .verdict.unknown { background: #b9770e; }
.tamp-report .verdict.violated { background: #c0392b; }
.tamp-report .message { margin: 6px 0; padding: 6px 10px; background: #fdf2e9; border-left: 4px solid #b9770e; }
.tamp-report .message.violated { background: #fdedec; border-color: #c0392b; }
.tamp-report table { border-collapse: collapse; margin: 4px 0 10px; }
.tamp-report table.data td, .tamp-report table.data th { border: 1px solid #d5dbe1; padding: 3px 8px;
  text-align: left; vertical-align: top; font-size: 13px; }
.tamp-report table.data th { background: #f2f4f7; }
.tamp-report code, .tamp-report .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
.tamp-report table.source { border: 1px solid #d5dbe1; background: #fbfcfd; min-width: 60%; }
.tamp-report table.source td { padding: 0 8px; white-space: pre; vertical-align: top; }
.tamp-report table.source td.ln { color: #95a5a6; text-align: right; border-right: 1px solid #d5dbe1;
  user-select: none; width: 2.5em; }
.tamp-report table.source td.ln a { color: inherit; text-decoration: none; }
.tamp-report table.source td.note { color: #1a5276; font-size: 12px; white-space: normal; font-style: italic; }
.tamp-report table.source tr.axiom-line { background: #eaf2f8; }
.tamp-report table.source tr.failed-trace { background: #fdebd0; }
.tamp-report table.source tr.failed-at { background: #f5b7b1; font-weight: bold; }
.tamp-report table.source tr:target { outline: 2px solid #2e86c1; }
.tamp-report .automaton-box { overflow-x: auto; border: 1px solid #d5dbe1; background: #fff; padding: 6px;
  margin: 6px 0; }
.tamp-report .legend { font-size: 12px; color: #5d6d7e; }
.tamp-report .legend .back { color: #c0392b; font-weight: bold; }
.tamp-report details { margin: 4px 0 10px; }
.tamp-report summary { cursor: pointer; color: #1a5276; }
.tamp-report .bar { display: inline-block; vertical-align: middle; }
.tamp-report .holds { color: #1e8449; font-weight: bold; }
.tamp-report .fails { color: #c0392b; font-weight: bold; }
.tamp-report .undecided { color: #b9770e; font-weight: bold; }
.tamp-report pre.engine-text { background: #fbfcfd; border: 1px solid #d5dbe1; padding: 6px 10px;
  font-size: 12.5px; white-space: pre-wrap; }
.tamp-report section.program { margin-bottom: 28px; }
.tamp-report section.part { margin-left: 14px; border-left: 3px solid #d5dbe1; padding-left: 10px; }
.tamp-report table, .tamp-report td, .tamp-report th, .tamp-report pre { text-align: left !important; }
.tamp-report table.source td.ln { text-align: right !important; }
.tamp-report .zoomable { overflow: hidden; position: relative; }
.tamp-report .zoomable svg { display: block; max-width: 100%; height: auto; touch-action: none; cursor: grab;
  margin: 0 auto; }
.tamp-report .zoomable.panning svg { cursor: grabbing; }
.tamp-report .zoom-tools { font-size: 12px; margin-bottom: 4px; }
.tamp-report .zoom-tools button { font-size: 12px; min-width: 26px; margin-right: 3px; cursor: pointer;
  border: 1px solid #aab7c4; background: #f2f4f7; border-radius: 3px; }
.tamp-report .zoom-hint { color: #95a5a6; margin-left: 6px; }
.tamp-report svg g.trace > path, .tamp-report svg g.trace > polygon, .tamp-report svg g.node.trace > rect {
  stroke: #e67e22 !important; stroke-width: 3px !important; }
.tamp-report svg g.edge.trace > text, .tamp-report svg g.back-edge.trace > text { fill: #a04000; font-weight: bold; }
.tamp-report .trace-key { color: #e67e22; font-weight: bold; }
.tamp-report .plot-box { margin: 6px 0; }
.tamp-report .plot-box svg { max-width: 100%; height: auto; }
.tamp-report .derivation code { font-size: 13px; }
.tamp-report.tamp-card { max-width: 760px; }
.tamp-report.tamp-card .zoomable svg { max-height: 300px; width: auto; }
.tamp-report.tamp-card .plot-box svg { max-height: 260px; width: auto; }
.tamp-report .card-line { font-size: 14px; margin: 4px 0; }
.tamp-report .program-card + .program-card { border-top: 1px solid #d5dbe1; margin-top: 8px; padding-top: 4px; }
"""
