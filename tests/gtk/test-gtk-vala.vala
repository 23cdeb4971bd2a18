/* test-gtk-vala.vala — libmend-gtk from Vala, through libmend-gtk-1.vapi
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Builds against the generated vapi (so that it stays usable) and checks,
 * under Xvfb, what a Vala app sees: the widgets take the chat, the queue
 * view shows the queue with the Continue item marked apart, and the banner
 * lets go of its chat.
 */

Gtk.Widget? first_with_class (Gtk.Widget widget, string css_class) {
    if (widget.has_css_class (css_class))
        return widget;
    for (var child = widget.get_first_child (); child != null; child = child.get_next_sibling ()) {
        var found = first_with_class (child, css_class);
        if (found != null)
            return found;
    }
    return null;
}

int main (string[] args) {
    Gtk.init ();

    var chat = new Mend.Chat (null);
    var banner = new MendGtk.StatusBanner (chat);
    var queue_view = new MendGtk.QueueView (chat);
    var box = new Gtk.Box (Gtk.Orientation.VERTICAL, 6);
    box.append (banner);
    box.append (queue_view);
    var window = new Gtk.Window ();
    window.child = box;
    window.present ();

    assert (banner.chat == chat);
    assert (queue_view.get_chat () == chat);
    assert (first_with_class (queue_view, "queued") == null);

    try {
        chat.queue.push ("Then update NEWS", null);
        chat.queue.insert_front ("Continue the current turn", Mend.CHAT_CONTINUE_PROVENANCE);
    } catch (Error e) {
        error ("%s", e.message);
    }
    var continue_row = first_with_class (queue_view, "continue") as Gtk.ListBoxRow;
    assert (continue_row != null && continue_row.get_index () == 0);
    var queued_row = first_with_class (queue_view, "queued") as Gtk.ListBoxRow;
    assert (queued_row != null && queued_row.get_index () == 1);

    banner.chat = null;
    assert (banner.chat == null);
    chat.close ();
    window.destroy ();
    print ("ok\n");
    return 0;
}
