package monitoring

import (
	"fmt"
	"slices"
	"strings"
)

// metricNames returns the metric names a PromQL expression selects, in order
// of first use, or an error saying what it cannot read and where. It is a
// tokenizer, not a parser (github.com/prometheus/prometheus's parser would
// bring that module's dependency graph and newer client_golang into go.mod):
// it skips strings, label matchers {…}, ranges and subqueries […], numbers
// and durations, operators, Grafana variables ($x, ${x}) and comments; an
// identifier is a function or aggregation when it is one of PromQL's and
// followed by "(" (an aggregation also by by/without), a keyword, a label
// list after by/without/on/ignoring/group_left/group_right, and otherwise a
// metric name. Unknown functions, unbalanced brackets, unterminated strings
// and {__name__=…} selectors are errors, so the check cannot pass by not
// seeing a name.
func metricNames(expr string) ([]string, error) {
	var names []string
	depth := 0 // open parentheses
	i := 0
	fail := func(format string, args ...any) ([]string, error) {
		return nil, fmt.Errorf("offset %d of %q: %s", i, expr, fmt.Sprintf(format, args...))
	}
	next := func(from int) byte { // the next non-space byte at or after from
		for from < len(expr) && isSpace(expr[from]) {
			from++
		}
		if from < len(expr) {
			return expr[from]
		}
		return 0
	}
	for i < len(expr) {
		c := expr[i]
		switch {
		case isSpace(c):
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			end, ok := skipString(expr, i)
			if !ok {
				return fail("unterminated string")
			}
			i = end
		case c == '{':
			end, ok := closing(expr, i, '{', '}')
			if !ok {
				return fail("unbalanced {")
			}
			if strings.Contains(expr[i:end], "__name__") {
				return fail("a selector by __name__ is not read; name the metric")
			}
			i = end
		case c == '[':
			end, ok := closing(expr, i, '[', ']')
			if !ok {
				return fail("unbalanced [")
			}
			i = end
		case c == '}' || c == ']':
			return fail("unbalanced %c", c)
		case c == '(':
			depth++
			i++
		case c == ')':
			if depth--; depth < 0 {
				return fail("unbalanced )")
			}
			i++
		case c == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				end, ok := closing(expr, i, '{', '}')
				if !ok {
					return fail("unbalanced ${")
				}
				i = end
			}
			for i < len(expr) && isIdent(expr[i], false) {
				i++
			}
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			// A number or a duration: 1, 0.5, .5, 1e3, 1e-3, 0x1f, 5m, 1h30m.
			for i < len(expr) && (isIdent(expr[i], false) || expr[i] == '.' ||
				(expr[i] == '+' || expr[i] == '-') && (expr[i-1] == 'e' || expr[i-1] == 'E') && !strings.HasPrefix(strings.ToLower(expr[:i]), "0x")) {
				i++
			}
		case isIdent(c, true):
			start := i
			for i < len(expr) && isIdent(expr[i], false) {
				i++
			}
			word := expr[start:i]
			lower := strings.ToLower(word)
			switch after := next(i); {
			case slices.Contains(labelListKeywords, lower):
				if after == '(' {
					end, ok := closing(expr, strings.IndexByte(expr[i:], '(')+i, '(', ')')
					if !ok {
						return fail("unbalanced ( after %s", word)
					}
					i = end
				}
			case slices.Contains(keywords, lower):
			case slices.Contains(aggregations, lower) && (after == '(' || nextWordIn(expr, i, "by", "without")):
			case after == '(':
				if !slices.Contains(functions, word) {
					i = start
					return fail("unknown function %s", word)
				}
			default:
				if !slices.Contains(names, word) {
					names = append(names, word)
				}
			}
		case strings.IndexByte("+-*/%^=!<>,@:", c) >= 0:
			i++
		default:
			return fail("unexpected %q", c)
		}
	}
	if depth != 0 {
		return fail("unbalanced (")
	}
	return names, nil
}

var (
	labelListKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}
	keywords          = []string{"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"}
	aggregations      = []string{"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
		"bottomk", "topk", "quantile", "limitk", "limit_ratio"}
	functions = []string{"abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh",
		"avg_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh", "count_over_time",
		"day_of_month", "day_of_week", "day_of_year", "days_in_month", "deg", "delta", "deriv",
		"double_exponential_smoothing", "end", "exp", "floor", "histogram_avg", "histogram_count",
		"histogram_fraction", "histogram_quantile", "histogram_stddev", "histogram_stdvar", "histogram_sum",
		"holt_winters", "hour", "idelta", "increase", "irate", "label_join", "label_replace", "last_over_time",
		"ln", "log10", "log2", "mad_over_time", "max_over_time", "min_over_time", "minute", "month", "pi",
		"predict_linear", "present_over_time", "quantile_over_time", "rad", "rate", "resets", "round", "scalar",
		"sgn", "sin", "sinh", "sort", "sort_by_label", "sort_by_label_desc", "sort_desc", "sqrt", "start",
		"stddev_over_time", "stdvar_over_time", "sum_over_time", "tan", "tanh", "time", "timestamp", "vector", "year"}
)

// skipString returns the offset after the string literal starting at i.
func skipString(s string, i int) (int, bool) {
	quote := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && quote != '`':
			j++
		case s[j] == quote:
			return j + 1, true
		}
	}
	return 0, false
}

// closing returns the offset after the close matching the open at i,
// skipping strings and nested pairs.
func closing(s string, i int, open, close byte) (int, bool) {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"', '\'', '`':
			end, ok := skipString(s, j)
			if !ok {
				return 0, false
			}
			j = end - 1
		case open:
			depth++
		case close:
			if depth--; depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// nextWordIn says whether the identifier after offset i is one of words.
func nextWordIn(s string, i int, words ...string) bool {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && isIdent(s[j], false) {
		j++
	}
	return slices.Contains(words, strings.ToLower(s[i:j]))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdent: a byte of a metric name or keyword ([a-zA-Z_:][a-zA-Z0-9_:]*).
func isIdent(c byte, first bool) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && isDigit(c)
}
