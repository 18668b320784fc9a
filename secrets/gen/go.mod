// The rule generator is its own module so palace's go.mod carries neither a
// TOML parser nor gitleaks: only the generated Go file is part of palace.
module github.com/palacehq/palace/secrets/gen

go 1.26.0

require github.com/BurntSushi/toml v1.6.0
