// The answer page of /oauth/authorize/ with response_mode=form_post: sends
// the form that carries the authorization response to the application as
// soon as the page is read. Without scripts, its button does the same.
// Served as /oauth/form_post.js, the one script the page's
// Content-Security-Policy allows (no inline script).
(function () {
    'use strict';
    var form = document.getElementById('resposta');
    if (form) {
        form.submit();
    }
})();
