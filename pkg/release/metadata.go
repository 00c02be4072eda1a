package release

// Metadata is the part of plugin.json the checks read.
type Metadata struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Name         string    `json:"name"`
	Backend      bool      `json:"backend"`
	Executable   string    `json:"executable"`
	Alerting     bool      `json:"alerting"`
	Info         Info      `json:"info"`
	Includes     []Include `json:"includes"`
	Dependencies struct {
		GrafanaDependency string `json:"grafanaDependency"`
	} `json:"dependencies"`
}

// Info is plugin.json's info block.
type Info struct {
	Description string `json:"description"`
	Author      struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	} `json:"author"`
	Keywords []string `json:"keywords"`
	Logos    struct {
		Small string `json:"small"`
		Large string `json:"large"`
	} `json:"logos"`
	Links       []Link       `json:"links"`
	Screenshots []Screenshot `json:"screenshots"`
	Version     string       `json:"version"`
	Updated     string       `json:"updated"`
}

// Link is one entry of info.links.
type Link struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Screenshot is one entry of info.screenshots.
type Screenshot struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// Include is one entry of includes.
type Include struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Path string `json:"path"`
}
