// A map between namespaces and base URLs for their online documentation
baseURLs = [
    [ 'GLib', 'https://docs.gtk.org/glib/' ],
    [ 'GObject', 'https://docs.gtk.org/gobject/' ],
    [ 'Gio', 'https://docs.gtk.org/gio/' ],
    [ 'Soup', 'https://libsoup.org/libsoup-3.0/' ],
    [ 'Json', 'https://gnome.pages.gitlab.gnome.org/json-glib/' ],
]
