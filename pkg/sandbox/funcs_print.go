package sandbox

import (
	"fmt"
	"strconv"
	"strings"
	"text/template"
)

// boundFuncs replace text/template's printing builtins with ones that
// measure their arguments first: fmt builds the whole text before anything
// can refuse it, and printf's widths ("%0999999999d") choose its size.
var boundFuncs = map[string]func(s *slot) any{
	"print":    printing("print", fmt.Sprint),
	"println":  printing("println", fmt.Sprintln),
	"html":     printing("html", template.HTMLEscaper),
	"js":       printing("js", template.JSEscaper),
	"urlquery": printing("urlquery", template.URLQueryEscaper),
	"printf": func(s *slot) any {
		return func(format string, args ...any) (string, error) {
			if err := s.b.clock(); err != nil {
				return "", err
			}
			size, err := printfSize(format, args)
			if err != nil {
				return "", err
			}
			if err := tooLarge("printf", size); err != nil {
				return "", err
			}
			out := fmt.Sprintf(format, args...)
			return out, s.b.produce("printf", int64(len(out)))
		}
	},
}

// escapeFactor bounds how much escaping (html, js, urlquery) grows text.
const escapeFactor = 6

func printing(name string, format func(...any) string) func(s *slot) any {
	return func(s *slot) any {
		return func(args ...any) (string, error) {
			if err := s.b.clock(); err != nil {
				return "", err
			}
			size, err := argsSize(args, escapeFactor)
			if err != nil {
				return "", err
			}
			if err := tooLarge(name, size); err != nil {
				return "", err
			}
			out := format(args...)
			return out, s.b.produce(name, int64(len(out)))
		}
	}
}

func argsSize(args []any, factor float64) (float64, error) {
	size := float64(len(args))
	for _, a := range args {
		n, err := valueSize(a, maxValue)
		if err != nil {
			return 0, err
		}
		size += factor * float64(n)
	}
	return size, nil
}

// printfSize bounds what fmt.Sprintf(format, args...) makes: the format, its
// widths and precisions, and the arguments, quoted or in hex up to 4 times
// their size, in Go syntax (%#v) up to 16 times.
func printfSize(format string, args []any) (float64, error) {
	size, factor, star := float64(len(format)), 1.0, false
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c >= '0' && c <= '9':
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				n, _ := strconv.ParseFloat(format[i:j], 64)
				size += n
				i = j - 1
				continue
			case c == '*':
				star = true
				continue
			case c == '#':
				factor = max(factor, 16)
				continue
			case strings.IndexByte("+- .[]", c) >= 0:
				continue
			case strings.IndexByte("qxXU", c) >= 0:
				factor = max(factor, 4)
			}
			break
		}
	}
	argSize, err := argsSize(args, factor)
	if err != nil {
		return 0, err
	}
	size += argSize
	if star {
		// A width or precision taken from an argument: any int may be one.
		for _, a := range args {
			if n, ok := a.(int); ok {
				size += float64(max(n, -n))
			}
		}
	}
	return size, nil
}
