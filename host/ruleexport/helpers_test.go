package ruleexport_test

import (
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
)

func seed(t testing.TB, f *jobtest.Fixture, c jobtest.Card) domain.Card { return f.Seed(t, c) }
