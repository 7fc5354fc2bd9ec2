// The devtools panel's styles, inside its shadow root: nothing leaks into the page and the page's styles stay out.
export const PANEL_CSS = `
:host { all: initial; font: 12px/1.4 system-ui, sans-serif; color: #1b1f24; }
.toggle { position: fixed; right: 12px; bottom: 12px; z-index: 2147483646; padding: 6px 10px; border-radius: 16px;
  border: 1px solid #9aa4b2; background: #fff; color: #1b1f24; font: inherit; cursor: pointer;
  box-shadow: 0 2px 8px rgba(0,0,0,.15); }
.toggle[data-phase=idle] { border-color: #2e7d32; }
.toggle[data-phase=offline], .toggle[data-phase=error] { border-color: #c62828; }
.toggle[data-phase=syncing], .toggle[data-phase=waiting] { border-color: #b26a00; }
:host([data-shop-lookup-devtools=floating]) .panel { position: fixed; left: 0; right: 0; bottom: 0; max-height: 50vh;
  overflow: auto; z-index: 2147483645; border-top: 2px solid #9aa4b2; box-shadow: 0 -4px 12px rgba(0,0,0,.15); }
.panel { background: #fbfcfd; padding: 8px 12px 48px; box-sizing: border-box; }
.panel[hidden] { display: none; }
h3 { margin: 10px 0 4px; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: #4a5563; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: 8px; }
.card { border: 1px solid #d8dde3; border-radius: 6px; padding: 4px 8px; background: #fff; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0; }
dt { color: #4a5563; } dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 2px 6px; border-bottom: 1px solid #e4e7eb; vertical-align: top; }
th { color: #4a5563; font-weight: 600; }
code { font: 11px/1.3 ui-monospace, monospace; }
.actions { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
button, input, select { font: inherit; padding: 3px 8px; border: 1px solid #9aa4b2; border-radius: 4px; background: #fff;
  color: #1b1f24; }
button { cursor: pointer; }
input { min-width: 10em; }
.ok { color: #1b5e20; } .no { color: #b71c1c; } .muted { color: #4a5563; }
.note { min-height: 1.4em; color: #4a5563; }
`;
