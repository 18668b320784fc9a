package host

import (
	"os"
	"os/user"

	"github.com/palacehq/palace/host/gatekeep"
)

// Mode is who drives the process: a human or an agent. It is fixed when the
// process starts and never raised later.
type Mode string

// The two modes.
const (
	Human Mode = "human"
	Agent Mode = "agent"
)

// ModeEnv is the environment variable an agent's environment sets.
const ModeEnv = gatekeep.ModeEnv

// ResolveMode picks the process mode from the --mode flag, PALACE_MODE and
// the surface's default. PALACE_MODE=agent wins over any flag: a flag can
// lower a human environment to agent, never raise an agent one.
func ResolveMode(flag, env string, fallback Mode) (Mode, error) {
	parse := func(what, v string) (Mode, error) {
		switch Mode(v) {
		case Human, Agent:
			return Mode(v), nil
		}
		return "", invalid(what, "%s %q is not a mode: use human or agent", what, v)
	}
	var envMode, flagMode Mode
	var err error
	if env != "" {
		if envMode, err = parse(ModeEnv, env); err != nil {
			return "", err
		}
	}
	if flag != "" {
		if flagMode, err = parse("--mode", flag); err != nil {
			return "", err
		}
	}
	switch {
	case envMode == Agent:
		return Agent, nil
	case flagMode != "":
		return flagMode, nil
	case envMode != "":
		return envMode, nil
	}
	return fallback, nil
}

// defaultActor is the OS user for humans and $PALACE_AGENT (else "agent")
// for agents.
func defaultActor(m Mode) string {
	if m == Agent {
		if a := os.Getenv("PALACE_AGENT"); a != "" {
			return a
		}
		return "agent"
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "human"
}
