package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Settings are what a client may configure, through initializationOptions
// and workspace/didChangeConfiguration, either bare or under a "palace" key
// (VS Code sends its settings section that way):
//
//	{"budget": 6000,
//	 "hints": {"hover": true, "codeLens": true, "inlayHints": true, "diagnostics": true}}
//
// A field left out keeps its current value. The mode is not a setting: it
// is fixed when the process starts (--mode, PALACE_MODE). Neither is the
// palace home: it is the user's (PALACE_HOME, --home), and LSP settings
// cannot tell a user's from a workspace's, which a cloned repository ships
// (.vscode/settings.json); a "home" setting is ignored with a warning.
type Settings struct {
	// Budget is the context pack budget in characters for hover, code lens
	// and palace.context. Defaults to host.DefaultBudget (0).
	Budget int `json:"budget,omitempty"`
	// Hints switches each face on or off. All default to on.
	Hints HintSettings `json:"hints"`
}

// HintSettings switch the faces of the server.
type HintSettings struct {
	Hover       bool `json:"hover"`
	CodeLens    bool `json:"codeLens"`
	InlayHints  bool `json:"inlayHints"`
	Diagnostics bool `json:"diagnostics"`
}

func defaultSettings() Settings {
	return Settings{Hints: HintSettings{Hover: true, CodeLens: true, InlayHints: true, Diagnostics: true}}
}

// applySettings returns cur with the patch in raw applied. Unknown keys are
// ignored (clients send whole sections); a wrongly typed value is an error
// naming it. notes lists what the caller should tell the user.
func applySettings(cur Settings, raw []byte) (next Settings, notes []string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return cur, nil, nil
	}
	// Decoding onto cur keeps every field the patch leaves out.
	p := struct {
		Settings
		Home *string `json:"home"`
		Mode *string `json:"mode"`
		// Palace is the same object nested under "palace".
		Palace *json.RawMessage `json:"palace"`
	}{Settings: cur}
	if err := json.Unmarshal(raw, &p); err != nil {
		return cur, nil, fmt.Errorf("read palace settings: %w", err)
	}
	if p.Palace != nil {
		return applySettings(cur, *p.Palace)
	}
	if p.Budget < 0 {
		return cur, nil, fmt.Errorf("read palace settings: budget %d is negative: use a size in characters, or 0 for the default", p.Budget)
	}
	if p.Home != nil && *p.Home != "" {
		notes = append(notes, fmt.Sprintf("the home setting %q is ignored: a workspace's settings must not choose the palace your editor reads and writes; "+
			"set palace.home in your user settings (the VS Code extension passes it to the server as --home), or start palace lsp with --home DIR or PALACE_HOME", *p.Home))
	}
	if p.Mode != nil {
		notes = append(notes, fmt.Sprintf("the mode setting %q is ignored: the mode is fixed when palace lsp starts (--mode or PALACE_MODE)", *p.Mode))
	}
	return p.Settings, notes, nil
}
