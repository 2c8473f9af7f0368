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
"""
