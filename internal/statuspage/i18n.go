package statuspage

import (
	"net/http"
	"strings"

	"golang.org/x/text/language"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// pageLanguages lists a page's languages, the default first (en when unset).
func pageLanguages(page *monv1.StatusPage) []string {
	def := "en"
	var out []string
	seen := map[string]bool{}
	add := func(tag string) {
		if tag != "" && !seen[strings.ToLower(tag)] {
			seen[strings.ToLower(tag)] = true
			out = append(out, tag)
		}
	}
	if l := page.Spec.Languages; l != nil {
		if l.Default != "" {
			def = l.Default
		}
		add(def)
		for _, t := range l.Enabled {
			add(t)
		}
		for _, t := range l.Translations {
			add(t.Language)
		}
	}
	add(def)
	return out
}

// pickLanguage chooses the page language for a request: ?lang= when the page
// offers it, else the best match of Accept-Language, else the default.
func pickLanguage(r *http.Request, page *monv1.StatusPage) string {
	langs := pageLanguages(page)
	if q := r.URL.Query().Get("lang"); q != "" {
		for _, l := range langs {
			if strings.EqualFold(l, q) {
				return l
			}
		}
	}
	if al := r.Header.Get("Accept-Language"); al != "" && len(langs) > 1 {
		tags := make([]language.Tag, 0, len(langs))
		for _, l := range langs {
			tags = append(tags, language.Make(l))
		}
		desired, _, err := language.ParseAcceptLanguage(al)
		if err == nil && len(desired) > 0 {
			_, idx, conf := language.NewMatcher(tags).Match(desired...)
			if conf != language.No {
				return langs[idx]
			}
		}
	}
	return langs[0]
}

// localized returns the document in language lang: the translation's title
// and description replace the page's where set.
func (d Document) localized(page *monv1.StatusPage, lang string) Document {
	d.Language = lang
	if page.Spec.Languages == nil {
		return d
	}
	for _, t := range page.Spec.Languages.Translations {
		if !strings.EqualFold(t.Language, lang) {
			continue
		}
		if t.Title != "" {
			d.Title = t.Title
		}
		if t.Description != "" {
			d.Description = t.Description
		}
	}
	return d
}
