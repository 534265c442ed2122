package sandbox

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// sprig's regular expression functions, with their work and results bounded:
// Go's matcher is linear in the text but also in the compiled pattern, and
// an expression that matches the empty string matches between every two
// characters.
const (
	maxPattern   = 16 << 10
	maxRegexWork = 1 << 26 // compiled instructions times text bytes
	maxMatches   = maxValue / elemSize
)

// compileFor compiles pattern for matching text within the budget.
func compileFor(name, pattern, text string) (*regexp.Regexp, error) {
	if len(pattern) > maxPattern {
		return nil, exceeded("%s takes a pattern of at most %s", name, sizeString(maxPattern))
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	// Compiled again to learn the program's size, which regexp keeps to itself.
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, err
	}
	if work := float64(len(prog.Inst)) * float64(len(text)+1); work > maxRegexWork {
		return nil, exceeded("%s: a pattern of %d instructions on %s of text is more than %d steps", name, len(prog.Inst), sizeString(int64(len(text))), maxRegexWork)
	}
	return re, nil
}

func regexMatch(regex, s string) (bool, error) {
	re, err := compileFor("regexMatch", regex, s)
	if err != nil {
		return false, err
	}
	return re.MatchString(s), nil
}

func regexFind(regex, s string) (string, error) {
	re, err := compileFor("regexFind", regex, s)
	if err != nil {
		return "", err
	}
	return re.FindString(s), nil
}

// atMost is n, or one more than the matches a result may hold when n asks
// for all or more.
func atMost(n int) int {
	if n < 0 || n > maxMatches {
		return maxMatches + 1
	}
	return n
}

func regexFindAll(regex, s string, n int) ([]string, error) {
	re, err := compileFor("regexFindAll", regex, s)
	if err != nil {
		return nil, err
	}
	found := re.FindAllString(s, atMost(n))
	if len(found) > maxMatches {
		return nil, exceeded("regexFindAll would find more than %d matches", maxMatches)
	}
	return found, nil
}

func regexSplit(regex, s string, n int) ([]string, error) {
	re, err := compileFor("regexSplit", regex, s)
	if err != nil {
		return nil, err
	}
	parts := re.Split(s, atMost(n))
	if len(parts) > maxMatches {
		return nil, exceeded("regexSplit would split into more than %d parts", maxMatches)
	}
	return parts, nil
}

func regexReplaceAll(regex, s, repl string) (string, error) {
	return replaceAll("regexReplaceAll", regex, s, repl, strings.Count(repl, "$"))
}

func regexReplaceAllLiteral(regex, s, repl string) (string, error) {
	return replaceAll("regexReplaceAllLiteral", regex, s, repl, 0)
}

// replaceAll replaces every match of regex in s by repl, which refers refs
// times to a group when expanded. Matches do not overlap, so each reference
// adds at most len(s) in all; when the output could exceed a value, the
// matches are counted first.
func replaceAll(name, regex, s, repl string, refs int) (string, error) {
	re, err := compileFor(name, regex, s)
	if err != nil {
		return "", err
	}
	size := func(matches int) float64 {
		return float64(len(s)) + float64(matches)*float64(len(repl)) + float64(refs)*float64(len(s))
	}
	if size(len(s)+1) > maxValue {
		matches := 0
		re.ReplaceAllStringFunc(s, func(string) string { matches++; return "" })
		if err := tooLarge(name, size(matches)); err != nil {
			return "", err
		}
	}
	if refs == 0 {
		return re.ReplaceAllLiteralString(s, repl), nil
	}
	return re.ReplaceAllString(s, repl), nil
}
