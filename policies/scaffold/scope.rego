# Team scope: replaces palace.scope whole. It starts as the embedded default
# (importable as data.palace.default.scope); change decision to adjust which
# cards apply and how well they fit.
package palace.scope

import rego.v1

import data.palace.default.scope as base

decision := base.decision
